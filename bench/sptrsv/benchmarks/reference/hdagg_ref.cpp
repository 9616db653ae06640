// Reference schedules for `spbench bench sptrsv-refs` (sptrsv-elasticity §5.1, Table 6.1, Fig. 6.2):
// calls the original HDagg (BehroozZare/HDagg-benchmark, src/hdagg) and, when built with -DSPMP,
// SpMP's LevelSchedule (IntelLabs/SpMP) on one Matrix Market file, without any reordering (the
// file's order is the order our schedulers see), and prints one tab-separated line per
// (scheduler, core count):
//
//   <scheduler> <cores> <supersteps> <seconds> <extra>
//
// scheduler: wavefront (HDagg's level sets), hdagg (HDAGG on the ungrouped DAG), hdagg_tree
// (partial sparsification, tree-based grouping, HDAGG, ungrouping: the demo's "LL Tree HDAGG"),
// hdagg_tree_bfs (the same with the BFS grouping), spmp (constructTaskGraph with transitive
// reduction: supersteps = its levels, extra = the point-to-point parents it keeps), spmp_solve
// (that schedule's point-to-point solve of L x = 1 as HDagg-benchmark's demo runs it,
// SpTrsv_LL_SpMP::fused_code, on the file's values: seconds = the median of --repeats timed solves
// after 2 untimed ones, extra = the rows whose x differs from a serial solve's by more than
// 1e-10 relative; the schedule is built outside the clock).  seconds is
// the scheduling time measured like the demo's build_set (wall clock around the same calls; with
// --schedule-repeats N, the median of N calls);
// scheduling runs with `cores` OpenMP threads, as the demo sets them before each schedule, or
// for HDagg with --threads N (its schedule does not depend on the thread count; SpMP's does,
// so SpMP always runs with `cores` threads).
// With --dump PREFIX, hdagg_tree also writes PREFIX.<cores>.txt: the superstep of every row.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <hdagg.h>
#include <sparse_io.h>
#include <sparse_utilities.h>

#ifdef SPMP
#include <CSR.hpp>
#include <LevelSchedule.hpp>
#include <Utils.hpp>
#endif


namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Result {
  int supersteps = 0;
  double seconds = 0;
  long extra = 0;
};

Result wavefront(CSC *L) {
  Result r;
  int n = L->n;
  std::vector<int> level_ptr(n + 1), level_set(n), node_to_level(n);
  double t0 = now();
  r.supersteps = HDAGG::build_levelSet_CSC(n, L->p, L->i, level_ptr.data(), level_set.data(),
                                           node_to_level.data());
  r.seconds = now() - t0;
  return r;
}

Result hdagg_flat(CSC *L, CSR *Lr, int cores) {
  Result r;
  int n = L->n;
  std::vector<int> level_ptr, part_ptr, node_ptr;
  int level_no = 0;
  double t0 = now();
  std::vector<double> cost(n, 0);
  HDAGG::costComputation(n, L->p, L->i, Lr->p, Lr->i, HDAGG::SpTrSv_LL, nullptr, nullptr, false, cost);
  std::vector<int> dag_ptr(L->p, L->p + n + 1);
  std::vector<int> dag_set(L->i, L->i + L->nnz);
  HDAGG::HDAGG(n, L->nnz, dag_ptr, dag_set, cost, cores, level_no, level_ptr, part_ptr, node_ptr,
               false, false, true);
  r.seconds = now() - t0;
  r.supersteps = level_no;
  return r;
}

Result hdagg_tree(CSC *L, CSR *Lr, int cores, bool bfs, const char *dump) {
  Result r;
  int n = L->n;
  std::vector<int> dag_ptr, dag_set, group_ptr, group_set, gdag_ptr, gdag_set;
  std::vector<int> level_ptr, part_ptr, node_ptr;
  int ngroups = 0, level_no = 0;
  double t0 = now();
  HDAGG::partialSparsification(n, L->nnz, L->p, L->i, dag_ptr, dag_set);
  if (bfs) {
    HDAGG::treeBasedGroupingBFS(n, dag_ptr, dag_set, ngroups, group_ptr, group_set, false);
  } else {
    HDAGG::treeBasedGrouping(n, dag_ptr, dag_set, ngroups, group_ptr, group_set, false);
  }
  HDAGG::buildGroupDAG(n, ngroups, group_ptr.data(), group_set.data(), dag_ptr.data(), dag_set.data(),
                       gdag_ptr, gdag_set);
  std::vector<double> cost(ngroups, 0);
  HDAGG::costComputation(ngroups, L->p, L->i, Lr->p, Lr->i, HDAGG::SpTrSv_LL, group_ptr.data(),
                         group_set.data(), true, cost);
  HDAGG::HDAGG(ngroups, gdag_ptr[ngroups], gdag_ptr, gdag_set, cost, cores, level_no, level_ptr,
               part_ptr, node_ptr, false, false, true);
  HDAGG::ungroupingScheduleAndApplyOrdering(n, level_no, level_ptr, part_ptr, node_ptr, group_ptr,
                                            group_set, dag_ptr.data(), dag_set.data(), true, false);
  r.seconds = now() - t0;
  r.supersteps = level_no;
  r.extra = ngroups;
  if (dump != nullptr) {
    std::vector<int> step(n, -1);
    for (int s = 0; s < level_no; s++)
      for (int p = level_ptr[s]; p < level_ptr[s + 1]; p++)
        for (int k = part_ptr[p]; k < part_ptr[p + 1]; k++) step[node_ptr[k]] = s;
    std::ofstream out(std::string(dump) + "." + std::to_string(cores) + ".txt");
    for (int i = 0; i < n; i++) out << step[i] << "\n";
  }
  return r;
}

// The median of some timings (the middle two's mean for an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size();
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

#ifdef SPMP
// The full symmetric matrix in SpMP's CSR, with its diagonal pointers, as the demo's
// Convert_LBCCSR_to_SpMP fills them.
void copy_to_spmp(CSR *full, SpMP::CSR &A) {
  A.alloc(full->n, full->nnz, true);
  A.n = full->n;
  std::copy(full->p, full->p + full->n + 1, A.rowptr);
  std::copy(full->i, full->i + full->nnz, A.colidx);
  std::copy(full->x, full->x + full->nnz, A.values);
  for (int i = 0; i < (int)full->n; ++i)
    for (int j = A.rowptr[i]; j < A.rowptr[i + 1]; ++j)
      if (A.colidx[j] == i) {
        A.diagptr[i] = j;
        A.idiag[i] = 1 / A.values[j];
        A.diag[i] = A.values[j];
      }
}

// SpMP's task graph from the full symmetric pattern, as the demo's SpTrsv_LL_SpMP::build_set.
Result spmp(CSR *full, int cores) {
  Result r;
  SpMP::CSR A;
  copy_to_spmp(full, A);
  double t0 = now();
  int *symRowPtr = nullptr, *symColIdx = nullptr, *symDiagPtr = nullptr, *symExtPtr = nullptr;
  bool symmetric = SpMP::getSymmetricNnzPattern(&A, &symRowPtr, &symDiagPtr, &symExtPtr, &symColIdx);
  SpMP::LevelSchedule schedule;
  if (symmetric) {
    schedule.constructTaskGraph(A);
  } else {
    schedule.constructTaskGraph(A.m, symRowPtr, symDiagPtr, symExtPtr, symColIdx,
                                SpMP::PrefixSumCostFunction(symRowPtr));
  }
  FREE(symRowPtr);
  FREE(symColIdx);
  FREE(symDiagPtr);
  FREE(symExtPtr);
  r.seconds = now() - t0;
  r.supersteps = (int)schedule.levIndices.size() - 1;
  const std::vector<int> &bounds = schedule.threadBoundaries;
  for (int tid = 0; tid + 1 < (int)bounds.size(); tid++)
    for (int task = bounds[tid]; task < bounds[tid + 1]; ++task) r.extra += schedule.nparentsForward[task];
  return r;
}

// The demo's SpMP executor (SpTrsv_LL_SpMP::fused_code): each thread runs its tasks in order,
// spinning on its parents' finished flags; rows through threadContToOrigPerm, L in CSR with the
// diagonal last in each row. Timed like the demo: the whole parallel region, flags reset inside.
Result spmp_solve(CSR *full, CSR *Lr, int cores, int repeats) {
  Result r;
  SpMP::CSR A;
  copy_to_spmp(full, A);
  SpMP::LevelSchedule schedule;
  schedule.constructTaskGraph(A);
  const int n = (int)Lr->n;
  const int *Lp = Lr->p, *Li = Lr->i;
  const double *Lx = Lr->x;
  const int *perm = schedule.threadContToOrigPerm;
  std::vector<double> ref(n), x(n);
  for (int row = 0; row < n; ++row) {
    double sum = 1.0;
    for (int j = Lp[row]; j < Lp[row + 1] - 1; j++) sum -= Lx[j] * ref[Li[j]];
    ref[row] = sum / Lx[Lp[row + 1] - 1];
  }
  std::vector<double> times;
  for (int rep = 0; rep < 2 + repeats; ++rep) {
    std::fill(x.begin(), x.end(), 1.0);
    double *xp = x.data();
    double t0 = now();
#pragma omp parallel
    {
      int nthreads = omp_get_num_threads();
      int tid = omp_get_thread_num();
      const int ntasks = schedule.ntasks;
      const short *nparents = schedule.nparentsForward;
      const std::vector<int> &threadBoundaries = schedule.threadBoundaries;
      const std::vector<int> &taskBoundaries = schedule.taskBoundaries;
      int nPerThread = (ntasks + nthreads - 1) / nthreads;
      int nBegin = std::min(nPerThread * tid, ntasks);
      int nEnd = std::min(nBegin + nPerThread, ntasks);
      volatile int *taskFinished = schedule.taskFinished;
      int **parents = schedule.parentsForward;
      memset((char *)(taskFinished + nBegin), 0, (nEnd - nBegin) * sizeof(int));
      synk::Barrier::getInstance()->wait(tid);
      for (int task = threadBoundaries[tid]; task < threadBoundaries[tid + 1]; ++task) {
        SPMP_LEVEL_SCHEDULE_WAIT;
        for (int c = taskBoundaries[task]; c < taskBoundaries[task + 1]; ++c) {
          int row = perm[c];
          for (int j = Lp[row]; j < Lp[row + 1] - 1; j++) xp[row] -= Lx[j] * xp[Li[j]];
          xp[row] /= Lx[Lp[row + 1] - 1];
        }
        SPMP_LEVEL_SCHEDULE_NOTIFY;
      }
    }
    double t = now() - t0;
    if (rep >= 2) times.push_back(t);
  }
  r.seconds = median(times);
  r.supersteps = (int)schedule.levIndices.size() - 1;
  for (int i = 0; i < n; ++i)
    if (!(std::abs(x[i] - ref[i]) <= 1e-10 * std::max(1.0, std::abs(ref[i])))) r.extra++;
  return r;
}
#endif

// Runs a schedule `n` times; its counts from the last run, its seconds the median of the n.
template <class F> Result median_of(int n, F schedule) {
  std::vector<double> seconds;
  Result r;
  for (int i = 0; i < n; ++i) {
    r = schedule();
    seconds.push_back(r.seconds);
  }
  r.seconds = median(seconds);
  return r;
}

void print(const char *name, int cores, const Result &r) {
  std::printf("%s\t%d\t%d\t%.9f\t%ld\n", name, cores, r.supersteps, r.seconds, r.extra);
  std::fflush(stdout);
}

// The original reader (sym_lib::read_mtx) fills CSC column by column as the entries come: a file
// whose entries are not sorted by column, then row (as a row-sorted file) corrupts its heap. Say
// which line breaks the order instead; empty when the file is in column order.
std::string column_order_problem(const char *path) {
  std::FILE *f = std::fopen(path, "r");
  if (f == nullptr) return "cannot open the file";
  char line[4096];
  long number = 0, prev_i = 0, prev_j = 0;
  bool size_seen = false;
  std::string problem;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    ++number;
    if (line[0] == '%' || line[0] == '\n') continue;
    if (!size_seen) { size_seen = true; continue; }
    long i = 0, j = 0;
    if (std::sscanf(line, "%ld %ld", &i, &j) != 2) continue;
    if (j < prev_j || (j == prev_j && i < prev_i)) {
      problem = "line " + std::to_string(number) + ": entry (" + std::to_string(i) + ", " + std::to_string(j) +
                ") comes after (" + std::to_string(prev_i) + ", " + std::to_string(prev_j) +
                "): the original reader needs the entries sorted by column, then row (as spbench writes them)";
      break;
    }
    prev_i = i, prev_j = j;
  }
  std::fclose(f);
  return problem;
}

}  // namespace

int main(int argc, char *argv[]) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MATRIX.mtx CORES[,CORES...] [--only NAME[,NAME...]] [--threads N] [--dump PREFIX] [--repeats N] [--schedule-repeats N]\n"
                 "  MATRIX.mtx: a plain Matrix Market file with its entries sorted by column, then row (the original\n"
                 "  reader's order; spbench writes them so); its lower triangle is kept (a symmetric file's stored half)\n",
                 argv[0]);
    return 2;
  }
  std::vector<int> cores;
  {
    std::stringstream list(argv[2]);
    std::string item;
    while (std::getline(list, item, ',')) {
      int c = std::atoi(item.c_str());
      if (c < 1) {
        std::fprintf(stderr, "%s: core counts must be positive integers, got '%s'\n", argv[0], argv[2]);
        return 2;
      }
      cores.push_back(c);
    }
  }
  std::string only = "wavefront,hdagg,hdagg_tree,hdagg_tree_bfs,spmp";
  const char *dump = nullptr;
  int threads = 0, repeats = 100, sched_repeats = 1;
  for (int a = 3; a < argc; a += 2) {
    if (a + 1 < argc && std::strcmp(argv[a], "--only") == 0) only = argv[a + 1];
    else if (a + 1 < argc && std::strcmp(argv[a], "--dump") == 0) dump = argv[a + 1];
    else if (a + 1 < argc && std::strcmp(argv[a], "--threads") == 0 && std::atoi(argv[a + 1]) > 0) threads = std::atoi(argv[a + 1]);
    else if (a + 1 < argc && std::strcmp(argv[a], "--repeats") == 0 && std::atoi(argv[a + 1]) > 0) repeats = std::atoi(argv[a + 1]);
    else if (a + 1 < argc && std::strcmp(argv[a], "--schedule-repeats") == 0 && std::atoi(argv[a + 1]) > 0) sched_repeats = std::atoi(argv[a + 1]);
    else {
      std::fprintf(stderr, "%s: unknown or incomplete option '%s'\n", argv[0], argv[a]);
      return 2;
    }
  }
  auto wanted = [&](const char *name) { return ("," + only + ",").find(std::string(",") + name + ",") != std::string::npos; };

  const std::string order = column_order_problem(argv[1]);
  if (!order.empty()) {
    std::fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1], order.c_str());
    return 2;
  }
  CSC *read = sym_lib::read_mtx(argv[1]);
  if (read == nullptr) {
    std::fprintf(stderr, "%s: %s: cannot read the Matrix Market file\n", argv[0], argv[1]);
    return 2;
  }
  CSC *L = sym_lib::make_half(read->n, read->p, read->i, read->x);  // the demo's non-METIS path
  delete read;
  CSR *Lr = sym_lib::csc_to_csr(L);
  CSC *full_csc = sym_lib::make_full(L);
  CSR *full = sym_lib::csc_to_csr(full_csc);
  std::printf("# n=%zu nnz=%zu\n", L->n, L->nnz);

  if (wanted("wavefront")) print("wavefront", 1, median_of(sched_repeats, [&] { return wavefront(L); }));
  for (int c : cores) {
    omp_set_num_threads(threads > 0 ? threads : c);
    if (wanted("hdagg")) print("hdagg", c, median_of(sched_repeats, [&] { return hdagg_flat(L, Lr, c); }));
    if (wanted("hdagg_tree")) print("hdagg_tree", c, median_of(sched_repeats, [&] { return hdagg_tree(L, Lr, c, false, dump); }));
    if (wanted("hdagg_tree_bfs")) print("hdagg_tree_bfs", c, median_of(sched_repeats, [&] { return hdagg_tree(L, Lr, c, true, nullptr); }));
#ifdef SPMP
    omp_set_num_threads(c);
    if (wanted("spmp")) print("spmp", c, median_of(sched_repeats, [&] { return spmp(full, c); }));
    if (wanted("spmp_solve")) print("spmp_solve", c, spmp_solve(full, Lr, c, repeats));
#endif
  }
  delete full;
  delete full_csc;
  delete Lr;
  delete L;
  return 0;
}

# cython: language_level=3
"""The lower triangle of a ``fem_mesh`` matrix in CSR, straight from the mesh (sptrsv-elasticity
Table A.1 at the matrices' own sizes).

``datasets.fem_mesh`` builds the n/15 stand-ins through scipy COO (every node pair of every cell,
both triangles, sorted): about 100 bytes per nonzero, too much at Queen_4147's 167M. Here every
node finds its coupled neighbours from the cells around it (the element's local node pairs, in
both orientations, in present cells only), keeps those numbered before it, and writes its ``dof``
rows: the dense blocks of those neighbours, then the node's own lower block (diagonal last).
Memory: the output (int32 indptr / indices, float64 values: 12 bytes per nonzero) and O(nodes)
arrays; two passes (count, fill), parallel over nodes.

The node numbering is an input (``position``), so the block-multicolour order of ``fem_mesh``, a
METIS or an AMD order of the node graph all use this one routine. Values: -1 off the diagonal,
the diagonal the row's off-diagonal count + 1 (strictly diagonally dominant: SPD).
"""
import numpy as np

from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc


cdef inline int _neighbours(int64_t u, const int64_t[::1] node_shape, const int64_t[::1] cell_shape,
                            int32_t span, const uint8_t[::1] present, const int32_t[:, ::1] pairs,
                            const int64_t[::1] node_id, const int64_t[::1] position,
                            int64_t* buf) noexcept nogil:
    """Distinct positions of the nodes coupled with grid node ``u`` into ``buf`` (sorted); count."""
    cdef int64_t c[3]
    cdef int64_t o[3]
    cdef int64_t v, cell, t, key
    cdef int k, side, d, m = 0, i, j, a_off, b_off
    cdef bint ok
    c[0] = u % node_shape[0]
    c[1] = (u // node_shape[0]) % node_shape[1]
    c[2] = u // (node_shape[0] * node_shape[1])
    for k in range(pairs.shape[0]):
        for side in range(2):
            a_off = 0 if side == 0 else 3
            b_off = 3 - a_off
            ok = True
            for d in range(3):
                o[d] = c[d] - pairs[k, a_off + d]
                if o[d] < 0 or o[d] % span != 0 or o[d] // span >= cell_shape[d]:
                    ok = False
                    break
            if not ok:
                continue
            cell = (o[0] // span) + cell_shape[0] * ((o[1] // span) + cell_shape[1] * (o[2] // span))
            if not present[cell]:
                continue
            v = (o[0] + pairs[k, b_off]) + node_shape[0] * ((o[1] + pairs[k, b_off + 1])
                                                          + node_shape[1] * (o[2] + pairs[k, b_off + 2]))
            key = position[node_id[v]]
            # insertion into the sorted, distinct buffer
            i = m
            while i > 0 and buf[i - 1] > key:
                i -= 1
            if i > 0 and buf[i - 1] == key:
                continue
            j = m
            while j > i:
                buf[j] = buf[j - 1]
                j -= 1
            buf[i] = key
            m += 1
    return m


def lower_csr(const int64_t[::1] node_shape, const int64_t[::1] cell_shape, int32_t span,
              const uint8_t[::1] present, const int32_t[:, ::1] pairs, const int64_t[::1] node_id,
              const int64_t[::1] position, const int64_t[::1] node_at, int dof, bint with_values=True):
    """(indptr, indices, data) of the lower triangle, rows of node ``node_at[p]`` at ``dof * p``.

    ``node_shape`` / ``cell_shape``: nodes / cells per axis (3 entries, 1 for absent axes, x
    fastest); ``present``: one byte per cell (Fortran order); ``pairs``: the element's coupled
    local node pairs (k, 6) as two 3-vectors of node offsets inside a cell; ``node_id``: grid node
    -> node number (-1 for nodes no present cell touches); ``position``: node number -> its place
    in the new order; ``node_at``: the inverse (place -> grid node). ``data`` is None without values.
    """
    cdef Py_ssize_t nodes = node_at.shape[0]
    cdef int kmax = 2 * <int>pairs.shape[0] + 1
    lower_arr = np.zeros(nodes, dtype=np.int64)
    total_arr = np.zeros(nodes, dtype=np.int64)
    cdef int64_t[::1] lower = lower_arr
    cdef int64_t[::1] total = total_arr
    cdef Py_ssize_t p
    cdef int64_t* buf
    cdef int m, i, lo
    with nogil, parallel():
        buf = <int64_t*>malloc(kmax * sizeof(int64_t))
        for p in prange(nodes, schedule="static"):
            m = _neighbours(node_at[p], node_shape, cell_shape, span, present, pairs, node_id, position, buf)
            lo = 0
            for i in range(m):
                if buf[i] < p:
                    lo = lo + 1
            lower[p] = lo
            total[p] = m
        free(buf)
    # rows of node p: dof rows, row a has dof * lower[p] + a + 1 entries
    per_node = dof * lower_arr * dof + dof * (dof + 1) // 2
    nnz = int(per_node.sum())
    if nnz >= np.iinfo(np.int32).max:
        raise ValueError(f"{nnz} nonzeros do not fit int32 indices")
    node_start_arr = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(per_node, out=node_start_arr[1:])
    indptr_arr = np.empty(dof * nodes + 1, dtype=np.int32)
    indices_arr = np.empty(nnz, dtype=np.int32)
    data_arr = np.empty(nnz if with_values else 0, dtype=np.float64)
    cdef int32_t[::1] indptr = indptr_arr
    cdef int32_t[::1] indices = indices_arr
    cdef double[::1] data = data_arr
    cdef int64_t[::1] node_start = node_start_arr
    cdef int64_t at, q
    cdef int a, b, ndof = dof
    cdef bint vals = with_values
    cdef double diag
    indptr[dof * nodes] = <int32_t>nnz
    with nogil, parallel():
        buf = <int64_t*>malloc(kmax * sizeof(int64_t))
        for p in prange(nodes, schedule="static"):
            m = _neighbours(node_at[p], node_shape, cell_shape, span, present, pairs, node_id, position, buf)
            at = node_start[p]
            for a in range(ndof):
                indptr[ndof * p + a] = <int32_t>at
                diag = <double>(ndof * total[p] + ndof - 1) + 1.0
                for i in range(m):
                    q = buf[i]
                    if q >= p:
                        break
                    for b in range(ndof):
                        indices[at] = <int32_t>(ndof * q + b)
                        if vals:
                            data[at] = -1.0
                        at = at + 1
                for b in range(a + 1):
                    indices[at] = <int32_t>(ndof * p + b)
                    if vals:
                        data[at] = diag if b == a else -1.0
                    at = at + 1
        free(buf)
    return indptr_arr, indices_arr, (data_arr if with_values else None)

"""The figure gallery of docs/figures.md (spbench.report.gallery)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from PIL import Image

from spbench.report import gallery


def _png(path, width_in=8.0):
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(width_in, 4))
    ax.plot([1, 2], [1, 2])
    fig.savefig(path, dpi=150)
    plt.close(fig)


def test_gallery_copies_shrunk_figures_and_lists_every_type(tmp_path):
    plots = tmp_path / "plots"
    _png(plots / "smoke" / "speedup.png")
    _png(plots / "smoke_tucker" / "fig13_volume_P64_K10.png")
    written = gallery.build_gallery(plots, tmp_path / "docs" / "figures", tmp_path / "docs" / "figures.md")
    assert {p.name for p in written} == {"speedup.png", "fig13_volume_P64_K10.png", "figures.md"}
    with Image.open(tmp_path / "docs" / "figures" / "speedup.png") as image:
        assert image.width == gallery.WIDTH
    page = (tmp_path / "docs" / "figures.md").read_text()
    assert "![SpTrSV speed-up over serial (paper Fig. 6.1)](figures/speedup.png)" in page
    assert page.count("## ") == len(gallery.ENTRIES)
    assert page.count("*(not drawn by the gallery's runs)*") == len(gallery.ENTRIES) - 2
    assert "make figures-gallery" in page


def test_gallery_without_figures_is_refused(tmp_path):
    with pytest.raises(ValueError, match="none of the gallery's figures"):
        gallery.build_gallery(tmp_path, tmp_path / "figures", tmp_path / "figures.md")
    assert not (tmp_path / "figures.md").exists()
    assert gallery.main([str(tmp_path), str(tmp_path / "f"), str(tmp_path / "p.md")]) == 2

"""`spbench bench` for Tucker: the schemes' metrics (lite), HOOI and TTM alone (hooi, ttm), memory at
scale (tucker-scale), SPLATT's Tucker beside ours (splatt), and the tensors they share."""

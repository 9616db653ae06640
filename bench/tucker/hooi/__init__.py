"""HOOI (tucker-lite §2.2, §3–4): one loop for one rank or many, its start factors, the local TTM
(element-wise and over CSF), the Lanczos SVD, and the dense reference the tests check against."""

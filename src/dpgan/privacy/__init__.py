"""Privacy machinery: the ledger and accountants, Poisson sampling, DP-SGD, and DP preprocessing."""

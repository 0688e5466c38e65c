"""The tables' DP statistics: one-way marginals of the encoded row (marginals), 2-way tables of pairs
of columns (pair_marginals) and which pairs a wide table measures (pair_selection), and the naive
Bayes label weights read off those tables with no ε of their own (naive_bayes). They see a table only
as the generator's output layout (dpgan.models.output_spans) and the encoded rows, so they import no
data kind; what G does with them is dpgan.training.table_anchors'."""

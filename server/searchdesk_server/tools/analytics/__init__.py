"""Search Analytics: the rows, their arithmetic and the paged reads every answer about search
performance builds on. The reports (`tools/reports/`) build on this package, never the reverse.

  dates        Google's day, periods, date ranges            query      a request from a call's arguments
  rows         Google's rows checked into entries            metrics    CTR/position arithmetic, sums, totals
  paging       paged reads past 25,000 rows, the row cap     concurrency requests together, errors as one's
  lazy_rows    result rows built only when shown             export     all_rows: every row to a CSV file
  tool         query_search_analytics itself
"""

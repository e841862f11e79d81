"""Reports: answers computed here from every row Google returns, past 25,000 rows a request.

Why on the server: a busy site's rows run to millions of characters, and a model adding them up
itself gets the arithmetic wrong (it calls growth a decline). Each report pages through Search
Analytics (`startRow`, 25,000 rows a request, a few requests at a time, up to `ROW_CAP` rows),
adds every page into per-key sums as it arrives (memory grows with keys, never with pages), and
hands back a short table with its provenance: the date ranges, Google's first incomplete date,
the rows read, and whether Google's row limits may have hidden data.

The arithmetic is fixed: CTR = clicks / impressions, position weighted by impressions, a change
in % undefined (null, shown "new") when its base is 0, CTR and position changes taken from the
rounded values shown (so a change always agrees with the two numbers beside it), and every
ordering broken by the key so equal values always come out the same way.
Reports read final data only (`dataState` final, sent explicitly) so a period never ends in
half-counted days; the default periods end on the last final day Google reports.

Each report's catalogue entry names its function in its own module. Rows,
arithmetic and paged reads come from `tools/analytics/` (rows, metrics, paging, concurrency,
lazy_rows), which every answer about search performance shares:

  periods     timeline, default and `vs` periods             collect     one period read and summed per key
  render      numbers as the tables write them               provenance  the lines every report opens with
  yardstick   the fewest impressions worth a look, CTR curve  comparison  two periods side by side
  calendar    whole Monday-Sunday weeks and whole months      index_moves what the coverage watch saw in a week
  compare_periods, traffic_drops, quick_wins, cannibalisation, weekly, decay, ctr_gaps, new_queries,
  brand_split: one module per report.
"""

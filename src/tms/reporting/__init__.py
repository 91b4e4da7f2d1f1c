"""From the pipeline's tables to what people read: report notebooks executed and rendered
(notebook), the site and its DAG (site, dag), DVC plots (plots) and the headless-browser check
of the pages (browser).
"""

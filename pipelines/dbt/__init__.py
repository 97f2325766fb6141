"""The dbt runner: `dbt build` and `dbt source freshness` on the sync's destination (`runner.py`,
`freshness.py`). Imports `sync` only (the pipeline whose destination it reads).
"""

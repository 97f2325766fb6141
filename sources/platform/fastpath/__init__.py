"""The fast path of large flat lists: pages validated and packed into Arrow tables by helper processes
(`offload.py`, `page_decoding.py`), so that dlt loads them without normalizing row by row
(`columnar.py`), and several walks read at once (`interleave.py`).

It is told what to pack by the resources: a `PageJob` carries the resource's declaration, whose model,
key and added columns give the table's layout.
"""

"""Webhooks: a receiver that stores the platform's deliveries durably (`receiver.py`, `store.py`) and a
loader that puts them into the warehouse through dlt (`loader.py`). Choices: docs/contracts.md part 6."""

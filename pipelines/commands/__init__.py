"""The write commands and the commands beside the sync: `auth`, `cart create`, `attendees import`,
`forget` (`write_commands.py` adds them to the command line). They import `sync` and `webhooks`.
"""

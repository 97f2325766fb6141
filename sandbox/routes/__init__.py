"""The sandbox's routes, one module per area of the API (spec part 4; the area is the first segment of
the operation's path), and `control.py`: the sandbox's own `/sandbox/*` routes and the token exchange.

| area | module | operations |
|---|---|---|
| checkout | `checkout.py` | create_cart |
| store | `store.py` | sale_details, list_affiliations, list_subscriptions, subscription_details, |
| | | list_products, list_product_campaigns, list_product_partners |
| financial | `financial.py` | list_fiscal_documents, list_transfers |
| events | `events.py` | event_details, list_attendees, add_attendee |
| school | `school.py` | list_enrollments, delivery_details |
| community | `community.py` | top_commented_posts, list_community_commenters |
| course | `course.py` | list_lesson_comments |
| webhook | `webhook.py` | list_webhook_origins |
"""

from __future__ import annotations

from sandbox.operation import OperationDef
from sandbox.routes import checkout, community, course, events, financial, school, store, webhook

# Every API operation the sandbox serves (`app.create_app` puts each behind the same gate).
OPERATIONS: list[OperationDef] = [
    *checkout.OPERATIONS,
    *store.OPERATIONS,
    *financial.OPERATIONS,
    *events.OPERATIONS,
    *school.OPERATIONS,
    *community.OPERATIONS,
    *course.OPERATIONS,
    *webhook.OPERATIONS,
]

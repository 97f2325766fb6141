{#-
    The join of a dlt child table to its parent table: dlt writes a list `parent.children[]` as the
    table `parent__children`, whose `_dlt_parent_id` is the parent row's `_dlt_id`. Staging models of
    child tables select from their `source` CTE and join the parent with this macro, to read the
    parent's key columns (`platform_col(<parent>_cols, 'id', ..., '<parent alias>')`):

        {%- set raw_sales = source('platform', 'sales') %}
        {%- set sales_cols = platform_source_columns(raw_sales) %}
        ...
        from source
        {{ platform_parent_join('sales', raw_sales, sales_cols, cols) }}

    renders

        inner join "db"."platform_raw"."sales" as sales
            on cast(source._dlt_parent_id as text) = cast(sales._dlt_id as text)

    parent_alias: the name the model's columns use for the parent; parent, parent_cols: its relation and
    its platform_source_columns; child_cols: the child's platform_source_columns; child_alias: the
    child's name in the model (`source`, or the intermediate parent for a grandchild). An inner join, so
    an orphan child row (no parent row) is left out. The parent is the union of the accounts' tables
    (platform_accounts.sql), joined within the child row's account. A missing parent table is an empty relation, as
    platform_source_select makes it, and a missing `_dlt_parent_id` / `_dlt_id` a typed null: then
    the join gives no rows instead of failing.

    Used by every staging model of a child table: sale_items, sale_affiliates, sale_partners,
    subscription_products, event_files, event_transmission_links, event_attendee_tags, delivery_tags,
    community_top_post_tags, community_commenter_posts, webhook_events, departure_values (the child of
    `_platform_departures`, same dlt keys, in the `platform_meta` source). The two grandchildren,
    subscription_product_deliveries and webhook_event_metadata, call it twice: the child to its parent,
    then the parent to the grandparent with `child_alias` set to the parent. No child-table model is
    left with a hand-written join. stg_platform__departures is a root table: no parent, no join.
-#}
{% macro platform_parent_join(parent_alias, parent, parent_cols, child_cols, child_alias='source') -%}
    inner join ({{ platform_source_select(parent, parent_cols) }}) as {{ parent_alias }}
        on {{ platform_col(child_cols, '_dlt_parent_id', 'string', child_alias) }} = {{ platform_col(parent_cols, '_dlt_id', 'string', parent_alias) }}
        and {{ child_alias }}.account = {{ parent_alias }}.account
{%- endmacro %}

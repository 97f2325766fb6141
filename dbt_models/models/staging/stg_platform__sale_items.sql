{%- set raw = source('platform', 'sales__items') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_sales = source('platform', 'sales') %}
{%- set sales_cols = platform_source_columns(raw_sales) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- parent keys
        {{ platform_col(sales_cols, 'id', 'string', 'sales') }} as sale_id,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as item_position,
        -- ids
        {{ platform_col(cols, 'id', 'string', 'source') }} as item_id,
        {{ platform_col(cols, 'product_id', 'string', 'source') }} as product_id,
        -- attributes
        {{ platform_col(cols, 'description', 'string', 'source') }} as item_description,
        {{ platform_col(cols, 'quantity', 'int', 'source') }} as quantity,
        {{ platform_col(cols, 'unit_value__value', 'money', 'source') }} as unit_value_amount,
        {{ platform_col(cols, 'unit_value__currency', 'string', 'source') }} as unit_value_currency,
        {{ platform_col(cols, 'value__value', 'money', 'source') }} as line_value_amount,
        {{ platform_col(cols, 'value__currency', 'string', 'source') }} as line_value_currency,
        {{ platform_col(cols, 'discount__value', 'money', 'source') }} as discount_amount,
        {{ platform_col(cols, 'discount__currency', 'string', 'source') }} as discount_currency,
        {{ platform_col(cols, 'freight_type', 'string', 'source') }} as freight_type,
        {{ platform_col(cols, 'freight_deadline', 'string', 'source') }} as freight_deadline,
        {{ platform_col(cols, 'tracking_code', 'string', 'source') }} as tracking_code

    from source
    {{ platform_parent_join('sales', raw_sales, sales_cols, cols) }}

),

final as (

    select
        {{ surrogate_key(['sale_id', 'item_position']) }} as sale_item_key,
        *
    from renamed

)

select * from final

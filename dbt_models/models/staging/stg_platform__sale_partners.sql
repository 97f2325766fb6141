{%- set raw = source('platform', 'sales__partners') %}
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
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as partner_position,
        -- ids
        {{ platform_col(cols, 'id', 'string', 'source') }} as partner_id,
        -- attributes
        {{ platform_col(cols, 'name', 'string', 'source') }} as partner_name,
        {{ platform_col(cols, 'email', 'string', 'source') }} as partner_email,
        {{ platform_col(cols, 'net_gain__value', 'money', 'source') }} as net_gain_amount,
        {{ platform_col(cols, 'net_gain__currency', 'string', 'source') }} as net_gain_currency

    from source
    {{ platform_parent_join('sales', raw_sales, sales_cols, cols) }}

),

final as (

    select
        {{ surrogate_key(['sale_id', 'partner_position']) }} as sale_partner_key,
        *
    from renamed

)

select * from final

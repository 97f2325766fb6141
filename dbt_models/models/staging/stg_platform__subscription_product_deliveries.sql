{%- set raw = source('platform', 'subscriptions__products__deliveries') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_subscription_products = source('platform', 'subscriptions__products') %}
{%- set subscription_products_cols = platform_source_columns(raw_subscription_products) %}
{%- set raw_subscriptions = source('platform', 'subscriptions') %}
{%- set subscriptions_cols = platform_source_columns(raw_subscriptions) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- parent keys
        {{ platform_col(subscriptions_cols, 'id', 'string', 'subscriptions') }} as subscription_id,
        {{ platform_col(subscription_products_cols, 'id', 'string', 'subscription_products') }} as product_id,
        {{ platform_col(subscription_products_cols, '_dlt_list_idx', 'int', 'subscription_products') }} as product_position,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as delivery_position,
        -- attributes
        {{ platform_col(cols, 'value', 'string', 'source') }} as delivery_type

    from source
    {{ platform_parent_join('subscription_products', raw_subscription_products, subscription_products_cols, cols) }}
    {{ platform_parent_join('subscriptions', raw_subscriptions, subscriptions_cols, subscription_products_cols, child_alias='subscription_products') }}

),

final as (

    select
        {{ surrogate_key(['subscription_id', 'product_position', 'delivery_position']) }} as subscription_product_delivery_key,
        *
    from renamed

)

select * from final

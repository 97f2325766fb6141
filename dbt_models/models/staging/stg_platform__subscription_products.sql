{%- set raw = source('platform', 'subscriptions__products') %}
{%- set cols = platform_source_columns(raw) %}
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
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as product_position,
        -- ids
        {{ platform_col(cols, 'id', 'string', 'source') }} as product_id,
        -- attributes
        {{ platform_col(cols, 'title', 'string', 'source') }} as product_title,
        {{ platform_col(cols, 'has_membership_fee', 'bool', 'source') }} as has_membership_fee,
        {{ platform_col(cols, 'membership_fee__value', 'money', 'source') }} as membership_fee_amount,
        {{ platform_col(cols, 'membership_fee__currency', 'string', 'source') }} as membership_fee_currency

    from source
    {{ platform_parent_join('subscriptions', raw_subscriptions, subscriptions_cols, cols) }}

),

final as (

    select
        {{ surrogate_key(['subscription_id', 'product_position']) }} as subscription_product_key,
        *
    from renamed

)

select * from final

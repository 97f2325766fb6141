{%- set raw = source('platform', 'deliveries') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'team_slug', 'string') }} as team_slug,
        {{ platform_col(cols, 'id', 'int') }} as delivery_id,
        {{ platform_col(cols, 'platform_product_id', 'string') }} as platform_product_id,
        {{ platform_col(cols, 'platform_offer_id', 'string') }} as platform_offer_id,
        -- attributes
        {{ platform_col(cols, 'name', 'string') }} as delivery_name,
        {{ platform_col(cols, 'platform', 'string') }} as selling_platform,
        {{ platform_col(cols, 'is_active', 'bool') }} as is_active,
        {{ platform_col(cols, 'is_subscription', 'bool') }} as is_subscription,
        {{ platform_col(cols, 'auto_remove_access', 'bool') }} as is_access_removed_automatically,
        {{ platform_col(cols, 'ends_after', 'int') }} as access_days,
        -- deletion: marked when its details answered 404 (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

),

final as (

    select
        {{ surrogate_key(['team_slug', 'delivery_id']) }} as delivery_key,
        *
    from renamed

)

select * from final

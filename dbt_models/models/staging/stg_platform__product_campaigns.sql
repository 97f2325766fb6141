{%- set raw = source('platform', 'product_campaigns') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'product_id', 'string') }} as product_id,
        {{ platform_col(cols, 'id', 'string') }} as campaign_id,
        {{ platform_col(cols, 'key', 'string') }} as campaign_key,
        -- attributes
        {{ platform_col(cols, 'title', 'string') }} as campaign_title,
        {{ platform_col(cols, 'url', 'string') }} as campaign_url,
        {{ platform_col(cols, 'result_per_click__affiliate', 'decimal') }} as result_per_click_affiliate,
        {{ platform_col(cols, 'result_per_click__producer', 'decimal') }} as result_per_click_producer,
        {{ platform_col(cols, 'is_infinity_funnel', 'bool') }} as is_infinity_funnel,
        {{ platform_col(cols, 'is_active', 'bool') }} as is_active,
        -- timestamps
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        -- deletion: marked when a complete scan no longer finds the record (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

),

final as (

    select
        {{ surrogate_key(['product_id', 'campaign_id']) }} as product_campaign_key,
        *
    from renamed

)

select * from final

{%- set raw = source('platform', 'products') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as product_id,
        {{ platform_col(cols, 'producer_id', 'string') }} as producer_id,
        -- attributes
        {{ platform_col(cols, 'name', 'string') }} as product_name,
        {{ platform_col(cols, 'description', 'string') }} as product_description,
        {{ platform_col(cols, 'author', 'string') }} as author,
        {{ platform_col(cols, 'image_url', 'string') }} as image_url,
        {{ platform_col(cols, 'type', 'string') }} as product_type,
        {{ platform_col(cols, 'status', 'string') }} as product_status,
        {{ platform_col(cols, 'moderation', 'string') }} as moderation_status,
        -- payment
        {{ platform_col(cols, 'payment__type', 'string') }} as payment_type,
        {{ platform_col(cols, 'payment__price__value', 'money') }} as price_amount,
        {{ platform_col(cols, 'payment__price__currency', 'string') }} as price_currency,
        {{ platform_col(cols, 'payment__methods__bankslip', 'bool') }} as accepts_bankslip,
        {{ platform_col(cols, 'payment__methods__pix', 'bool') }} as accepts_pix,
        {{ platform_col(cols, 'payment__methods__card', 'bool') }} as accepts_card,
        {{ platform_col(cols, 'payment__methods__multiple_cards', 'bool') }} as accepts_multiple_cards,
        -- timestamps
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        {{ platform_col(cols, 'updated_at', 'timestamp') }} as updated_at,
        -- deletion: marked when a complete scan no longer finds the record (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

)

select * from renamed

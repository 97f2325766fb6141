{%- set raw = source('platform', 'deliveries__tags') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_deliveries = source('platform', 'deliveries') %}
{%- set deliveries_cols = platform_source_columns(raw_deliveries) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- parent keys
        {{ platform_col(deliveries_cols, 'team_slug', 'string', 'deliveries') }} as team_slug,
        {{ platform_col(deliveries_cols, 'id', 'int', 'deliveries') }} as delivery_id,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as tag_position,
        -- attributes
        {{ platform_col(cols, 'value', 'string', 'source') }} as tag

    from source
    {{ platform_parent_join('deliveries', raw_deliveries, deliveries_cols, cols) }}

),

final as (

    select
        {{ surrogate_key(['team_slug', 'delivery_id', 'tag_position']) }} as delivery_tag_key,
        *
    from renamed

)

select * from final

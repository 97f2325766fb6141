{%- set raw = source('platform', 'deliveries__tags') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_deliveries = source('platform', 'deliveries') %}
{%- set deliveries_cols = platform_source_columns(raw_deliveries) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

deliveries as (

    {{ platform_source_select(raw_deliveries, deliveries_cols) }}

),

renamed as (

    select
        -- parent keys
        {{ platform_col(deliveries_cols, 'team_slug', 'string', 'deliveries') }} as team_slug,
        {{ platform_col(deliveries_cols, 'id', 'int', 'deliveries') }} as delivery_id,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as tag_position,
        -- attributes
        {{ platform_col(cols, 'value', 'string', 'source') }} as tag

    from source
    inner join deliveries
        on {{ platform_col(cols, '_dlt_parent_id', 'string', 'source') }} = {{ platform_col(deliveries_cols, '_dlt_id', 'string', 'deliveries') }}

),

final as (

    select
        {{ surrogate_key(['team_slug', 'delivery_id', 'tag_position']) }} as delivery_tag_key,
        *
    from renamed

)

select * from final

{%- set raw = source('platform', 'community_commenters') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- snapshot
        {{ platform_col(cols, 'community_id', 'int') }} as community_id,
        {{ platform_col(cols, 'snapshot_at', 'timestamp') }} as snapshot_at,
        {{ platform_col(cols, 'days', 'int') }} as window_days,
        -- ids
        {{ platform_col(cols, 'id', 'int') }} as member_id,
        -- attributes
        {{ platform_col(cols, 'name', 'string') }} as member_name,
        {{ platform_col(cols, 'email', 'string') }} as member_email

    from source

),

final as (

    select
        {{ surrogate_key(['community_id', 'snapshot_at', 'member_id']) }} as community_commenter_key,
        *
    from renamed

)

select * from final

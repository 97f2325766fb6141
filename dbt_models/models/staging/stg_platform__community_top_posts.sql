{%- set raw = source('platform', 'community_top_posts') %}
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
        {{ platform_col(cols, 'id', 'int') }} as post_id,
        {{ platform_col(cols, 'member__id', 'int') }} as author_member_id,
        {{ platform_col(cols, 'space__id', 'int') }} as space_id,
        -- attributes
        {{ platform_col(cols, 'title', 'string') }} as post_title,
        {{ platform_col(cols, 'member__email', 'string') }} as author_member_email,
        {{ platform_col(cols, 'space__name', 'string') }} as space_name,
        {{ platform_col(cols, 'total_comments', 'int') }} as count_comments,
        {{ platform_col(cols, 'total_likes', 'int') }} as count_likes,
        -- timestamps
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        {{ platform_col(cols, 'updated_at', 'timestamp') }} as updated_at

    from source

),

final as (

    select
        {{ surrogate_key(['community_id', 'snapshot_at', 'post_id']) }} as community_top_post_key,
        *
    from renamed

)

select * from final

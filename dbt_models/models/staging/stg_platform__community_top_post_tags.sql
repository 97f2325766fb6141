{%- set raw = source('platform', 'community_top_posts__tags') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_community_top_posts = source('platform', 'community_top_posts') %}
{%- set community_top_posts_cols = platform_source_columns(raw_community_top_posts) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- parent keys
        {{ platform_col(community_top_posts_cols, 'community_id', 'int', 'community_top_posts') }} as community_id,
        {{ platform_col(community_top_posts_cols, 'snapshot_at', 'timestamp', 'community_top_posts') }} as snapshot_at,
        {{ platform_col(community_top_posts_cols, 'id', 'int', 'community_top_posts') }} as post_id,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as tag_position,
        -- attributes
        {{ platform_col(cols, 'value', 'string', 'source') }} as tag

    from source
    {{ platform_parent_join('community_top_posts', raw_community_top_posts, community_top_posts_cols, cols) }}

),

final as (

    select
        {{ surrogate_key(['community_id', 'snapshot_at', 'post_id', 'tag_position']) }} as community_top_post_tag_key,
        *
    from renamed

)

select * from final

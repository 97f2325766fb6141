{%- set raw = source('platform', 'community_commenters__posts') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_community_commenters = source('platform', 'community_commenters') %}
{%- set community_commenters_cols = platform_source_columns(raw_community_commenters) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- parent keys
        {{ platform_col(community_commenters_cols, 'community_id', 'int', 'community_commenters') }} as community_id,
        {{ platform_col(community_commenters_cols, 'snapshot_at', 'timestamp', 'community_commenters') }} as snapshot_at,
        {{ platform_col(community_commenters_cols, 'id', 'int', 'community_commenters') }} as member_id,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as post_position,
        -- ids
        {{ platform_col(cols, 'id', 'int', 'source') }} as post_id,
        -- attributes
        {{ platform_col(cols, 'title', 'string', 'source') }} as post_title

    from source
    {{ platform_parent_join('community_commenters', raw_community_commenters, community_commenters_cols, cols) }}

),

final as (

    select
        {{ surrogate_key(['community_id', 'snapshot_at', 'member_id', 'post_position']) }} as community_commenter_post_key,
        *
    from renamed

)

select * from final

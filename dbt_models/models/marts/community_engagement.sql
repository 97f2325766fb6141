{#- Community x snapshot day: the top commented posts and the members who commented, as read by the
    source's snapshots (the latest snapshot of each day counts). -#}
with top_posts as (

    select
        *,
        cast(snapshot_at as date) as snapshot_on
    from {{ ref('stg_platform__community_top_posts') }}

),

commenters as (

    select
        *,
        cast(snapshot_at as date) as snapshot_on
    from {{ ref('stg_platform__community_commenters') }}

),

commented_posts as (

    select
        account,
        community_id,
        snapshot_at,
        count(*) as count_commented_posts,
        count(distinct post_id) as count_distinct_commented_posts
    from {{ ref('stg_platform__community_commenter_posts') }}
    group by account, community_id, snapshot_at

),

latest_post_snapshots as (

    select
        account,
        community_id,
        snapshot_on,
        max(snapshot_at) as snapshot_at
    from top_posts
    group by account, community_id, snapshot_on

),

latest_commenter_snapshots as (

    select
        account,
        community_id,
        snapshot_on,
        max(snapshot_at) as snapshot_at
    from commenters
    group by account, community_id, snapshot_on

),

ranked_posts as (

    select
        top_posts.*,
        row_number() over (
            partition by top_posts.account, top_posts.community_id, top_posts.snapshot_at
            order by top_posts.count_comments desc, top_posts.post_id asc
        ) as comment_rank
    from top_posts
    inner join latest_post_snapshots
        on top_posts.account = latest_post_snapshots.account
        and top_posts.community_id = latest_post_snapshots.community_id
        and top_posts.snapshot_at = latest_post_snapshots.snapshot_at

),

posts_per_day as (

    select
        account,
        community_id,
        snapshot_on,
        max(window_days) as window_days,
        count(*) as count_top_posts,
        sum(count_comments) as top_posts_comments,
        sum(count_likes) as top_posts_likes,
        max(case when comment_rank = 1 then post_id end) as most_commented_post_id,
        max(case when comment_rank = 1 then post_title end) as most_commented_post_title,
        max(case when comment_rank = 1 then count_comments end) as most_commented_post_comments
    from ranked_posts
    group by account, community_id, snapshot_on

),

members_per_day as (

    select
        commenters.account,
        commenters.community_id,
        commenters.snapshot_on,
        count(*) as count_commenting_members,
        max(commented_posts.count_commented_posts) as count_commented_posts,
        max(commented_posts.count_distinct_commented_posts) as count_distinct_commented_posts
    from commenters
    inner join latest_commenter_snapshots
        on commenters.account = latest_commenter_snapshots.account
        and commenters.community_id = latest_commenter_snapshots.community_id
        and commenters.snapshot_at = latest_commenter_snapshots.snapshot_at
    left join commented_posts
        on commenters.account = commented_posts.account
        and commenters.community_id = commented_posts.community_id
        and commenters.snapshot_at = commented_posts.snapshot_at
    group by commenters.account, commenters.community_id, commenters.snapshot_on

),

final as (

    select
        coalesce(posts_per_day.account, members_per_day.account) as account,  -- noqa: RF04
        {{ surrogate_key(['coalesce(posts_per_day.community_id, members_per_day.community_id)',
                          'coalesce(posts_per_day.snapshot_on, members_per_day.snapshot_on)']) }}
            as community_day_key,
        coalesce(posts_per_day.community_id, members_per_day.community_id) as community_id,
        coalesce(posts_per_day.snapshot_on, members_per_day.snapshot_on) as snapshot_on,
        posts_per_day.window_days,
        coalesce(posts_per_day.count_top_posts, 0) as count_top_posts,
        coalesce(posts_per_day.top_posts_comments, 0) as top_posts_comments,
        coalesce(posts_per_day.top_posts_likes, 0) as top_posts_likes,
        posts_per_day.most_commented_post_id,
        posts_per_day.most_commented_post_title,
        posts_per_day.most_commented_post_comments,
        coalesce(members_per_day.count_commenting_members, 0) as count_commenting_members,
        coalesce(members_per_day.count_commented_posts, 0) as count_commented_posts,
        coalesce(members_per_day.count_distinct_commented_posts, 0) as count_distinct_commented_posts
    from posts_per_day
    full outer join members_per_day
        on posts_per_day.account = members_per_day.account
        and posts_per_day.community_id = members_per_day.community_id
        and posts_per_day.snapshot_on = members_per_day.snapshot_on

)

select * from final

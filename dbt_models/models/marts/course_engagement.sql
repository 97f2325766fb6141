{#- Course x lesson: how lesson comments are moderated and handled, and how fast they were answered as
    the builds observed it (int_platform__lesson_comment_responses). The course is known only when the
    source read comments per course (null otherwise). A comment status the spec does not list (or
    none) is counted in count_unlisted_status. -#}
{%- set statuses = var('platform_enums')['lesson_comment_status'] %}

with comments as (

    select * from {{ ref('stg_platform__lesson_comments') }}
    where not is_deleted

),

responses as (

    select * from {{ ref('int_platform__lesson_comment_responses') }}

),

aggregated as (

    select
        comments.account,
        comments.course_id,
        comments.lesson_id,
        count(*) as count_comments,
        {% for status in statuses -%}
            sum(case when comments.comment_status = '{{ status }}' then 1 else 0 end) as count_{{ snake_case(status) }},
        {% endfor -%}
        sum(case when {{ unlisted('comments.comment_status', statuses) }} then 1 else 0 end) as count_unlisted_status,
        sum(case when comments.is_answered then 1 else 0 end) as count_answered,
        sum(case when comments.is_read then 1 else 0 end) as count_read,
        sum(case when comments.is_favorite then 1 else 0 end) as count_favorite,
        sum(case when comments.is_fixed then 1 else 0 end) as count_fixed,
        count(responses.observed_response_hours) as count_responses_observed,
        avg(responses.observed_response_hours) as avg_observed_response_hours,
        min(comments.created_at) as first_comment_at,
        max(comments.created_at) as last_comment_at
    from comments
    left join responses
        on comments.account = responses.account
        and comments.comment_id = responses.comment_id
    group by comments.account, comments.course_id, comments.lesson_id

),

final as (

    select
        account,
        {{ surrogate_key(['course_id', 'lesson_id']) }} as course_lesson_key,
        course_id,
        lesson_id,
        count_comments,
        {% for status in statuses -%}
            count_{{ snake_case(status) }},
        {% endfor -%}
        count_unlisted_status,
        count_answered,
        count_read,
        count_favorite,
        count_fixed,
        {{ safe_divide('count_answered', 'count_comments') }} as answered_rate,
        count_comments - count_read as count_unread,
        count_responses_observed,
        avg_observed_response_hours,
        first_comment_at,
        last_comment_at
    from aggregated

)

select * from final

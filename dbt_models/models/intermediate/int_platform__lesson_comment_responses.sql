{#- When the builds first saw each lesson comment, and first saw it answered. The API says whether a
    comment was answered, not when: a response time is observed only for a comment first seen
    unanswered, and is as precise as the schedule of `platform-sync models` (with the sync before it). -#}
with versions as (

    select * from {{ ref('int_platform__lesson_comment_answer_versions') }}

),

ordered as (

    select
        account,
        comment_id,
        is_answered,
        dbt_valid_from,
        row_number() over (partition by account, comment_id order by dbt_valid_from) as version_number
    from versions

),

per_comment as (

    select
        account,
        comment_id,
        min(dbt_valid_from) as first_seen_at,
        max(case when version_number = 1 and is_answered then 1 else 0 end) = 1 as was_answered_when_first_seen,
        min(case when is_answered then dbt_valid_from end) as answered_seen_at
    from ordered
    group by account, comment_id

),

final as (

    select
        account,
        comment_id,
        first_seen_at,
        was_answered_when_first_seen,
        case when not was_answered_when_first_seen then answered_seen_at end as answered_seen_at,
        case
            when not was_answered_when_first_seen and answered_seen_at is not null
                then {{ dbt.datediff('first_seen_at', 'answered_seen_at', 'second') }} / 3600.0
        end as observed_response_hours
    from per_comment

)

select * from final

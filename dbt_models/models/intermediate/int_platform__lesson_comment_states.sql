{#- Whether each lesson comment is answered, as the API says now: what the snapshot
    snp_platform__lesson_comment_answers versions whenever it changes. -#}
with comments as (

    select * from {{ ref('stg_platform__lesson_comments') }}
    where not is_deleted

),

final as (

    select
        account,
        comment_id,
        is_answered
    from comments
    where comment_id is not null

)

select * from final

-- depends_on: {{ ref('int_platform__lesson_comment_states') }}
{#- The versions of each lesson comment's `isAnswered` that the builds saw (the snapshot
    snp_platform__lesson_comment_answers); before any snapshot (`dbt run` takes none), the current
    states without a time, from which nothing is observed. -#}
{%- set snapshot = ref('snp_platform__lesson_comment_answers') %}
{%- set has_snapshot = not execute or load_relation(snapshot) is not none %}

with versions as (

    {%- if has_snapshot %}

    select
        -- a version taken before accounts existed is the `default` account's
        coalesce(account, 'default') as account,  -- noqa: RF04
        comment_id,
        is_answered,
        dbt_valid_from
    from {{ snapshot }}

    {%- else %}

        select
            account,
            comment_id,
            is_answered,
            cast(null as {{ type_timestamptz() }}) as dbt_valid_from
        from {{ ref('int_platform__lesson_comment_states') }}

    {%- endif %}

)

select * from versions

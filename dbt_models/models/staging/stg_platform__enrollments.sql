{%- set raw = source('platform', 'enrollments') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'team_slug', 'string') }} as team_slug,
        {{ platform_col(cols, 'student_slug', 'string') }} as student_slug,
        -- attributes
        {{ platform_col(cols, 'course__name', 'string') }} as course_name,
        {{ platform_col(cols, 'progress', 'float') }} as progress_percent,
        {{ platform_col(cols, 'certificate_url', 'string') }} as certificate_url,
        {{ platform_col(cols, 'created_at', 'timestamp_text') }} as created_at,
        -- deletion: marked when their student answered 404 (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

),

final as (

    select
        {{ surrogate_key(['team_slug', 'student_slug', 'course_name']) }} as enrollment_key,
        *
    from renamed

)

select * from final

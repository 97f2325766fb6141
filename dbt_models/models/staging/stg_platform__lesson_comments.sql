{%- set raw = source('platform', 'lesson_comments') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'int') }} as comment_id,
        {{ platform_col(cols, 'lesson_id', 'int') }} as lesson_id,
        {{ platform_col(cols, 'course_id', 'int') }} as course_id,
        -- attributes
        {{ platform_col(cols, 'text', 'string') }} as comment_text,
        {{ platform_col(cols, 'type', 'string') }} as comment_type,
        {{ platform_col(cols, 'status', 'string') }} as comment_status,
        {{ platform_col(cols, 'author', 'string') }} as author,
        {{ platform_col(cols, 'is_read', 'bool') }} as is_read,
        {{ platform_col(cols, 'is_favorite', 'bool') }} as is_favorite,
        {{ platform_col(cols, 'is_fixed', 'bool') }} as is_fixed,
        {{ platform_col(cols, 'is_answered', 'bool') }} as is_answered,
        -- timestamps
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        -- deletion: marked when a complete scan no longer finds the record (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

)

select * from renamed

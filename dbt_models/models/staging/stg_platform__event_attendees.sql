{%- set raw = source('platform', 'event_attendees') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as attendee_id,
        {{ platform_col(cols, 'event_id', 'string') }} as event_id,
        {{ platform_col(cols, 'ticket_id', 'string') }} as ticket_id,
        {{ platform_col(cols, 'invoice_id', 'string') }} as invoice_id,
        {{ platform_col(cols, 'platform_id', 'string') }} as platform_id,
        {{ platform_col(cols, 'first_platform_id', 'string') }} as first_platform_id,
        {{ platform_col(cols, 'invite_key', 'string') }} as invite_key,
        -- attendee
        {{ platform_col(cols, 'name', 'string') }} as attendee_name,
        {{ platform_col(cols, 'email', 'string') }} as attendee_email,
        {{ platform_col(cols, 'document', 'string') }} as attendee_document,
        {{ platform_col(cols, 'document_type', 'string') }} as document_type,
        {{ platform_col(cols, 'phone', 'string') }} as attendee_phone,
        {{ platform_col(cols, 'ticket_name', 'string') }} as ticket_name,
        {{ platform_col(cols, 'status', 'string') }} as attendee_status,
        {{ platform_col(cols, 'status_description', 'string') }} as status_description,
        {{ platform_col(cols, 'manually_created', 'bool') }} as is_manually_created,
        {{ platform_col(cols, 'from_squeeze', 'bool') }} as is_from_squeeze,
        {{ platform_col(cols, 'custom_fields', 'json_text') }} as custom_fields,
        -- invoice
        {{ platform_col(cols, 'invoice_customer_name', 'string') }} as invoice_customer_name,
        {{ platform_col(cols, 'invoice_customer_email', 'string') }} as invoice_customer_email,
        {{ platform_col(cols, 'invoice_customer_platform_id', 'string') }} as invoice_customer_platform_id,
        {{ platform_col(cols, 'invoice_customer_document', 'string') }} as invoice_customer_document,
        {{ platform_col(cols, 'invoice_amount', 'money') }} as invoice_amount,
        {{ platform_col(cols, 'invoice_created_at', 'timestamp_text') }} as invoice_created_at,
        {{ platform_col(cols, 'invoice_paid_at', 'timestamp_text') }} as invoice_paid_at,
        -- timestamps
        {{ platform_col(cols, 'checkin_date', 'timestamp') }} as checked_in_at,
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        {{ platform_col(cols, 'modified_at', 'timestamp') }} as modified_at,
        -- deletion: marked when their event answered 404 (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

)

select * from renamed

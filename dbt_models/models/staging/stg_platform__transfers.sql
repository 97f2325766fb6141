{%- set raw = source('platform', 'transfers') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as transfer_id,
        -- amounts
        {{ platform_col(cols, 'value__value', 'money') }} as transfer_amount,
        {{ platform_col(cols, 'value__currency', 'string') }} as transfer_currency,
        -- attributes
        {{ platform_col(cols, 'status', 'string') }} as transfer_status,
        {{ platform_col(cols, 'details', 'string') }} as details,
        {{ platform_col(cols, 'bank_account__type', 'string') }} as bank_account_type,
        {{ platform_col(cols, 'bank_account__bank_code', 'string') }} as bank_code,
        {{ platform_col(cols, 'bank_account__agency', 'string') }} as bank_agency,
        {{ platform_col(cols, 'bank_account__account', 'string') }} as bank_account_number,
        -- dates
        {{ platform_col(cols, 'requested_at', 'date') }} as requested_on,
        {{ platform_col(cols, 'completed_at', 'date') }} as completed_on,
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        -- deletion: marked when a complete scan no longer finds the record (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

)

select * from renamed

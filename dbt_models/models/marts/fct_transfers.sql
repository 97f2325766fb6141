with transfers as (

    select * from {{ ref('stg_platform__transfers') }}
    where not is_deleted

),

final as (

    select
        -- ids
        account,
        transfer_id,

        -- amount and status
        transfer_currency as currency,
        transfer_amount,
        transfer_status,
        transfer_status = 'confirmed' as is_confirmed,
        details,

        -- bank account
        bank_account_type,
        bank_code,
        bank_agency,
        bank_account_number,

        -- dates
        created_at,
        requested_on,
        completed_on,
        coalesce(completed_on, requested_on, cast(created_at as date)) as transfer_on

    from transfers

)

select * from final

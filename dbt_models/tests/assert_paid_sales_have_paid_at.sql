-- A sale in status `paid` has a payment time (daily and monthly figures date it by it).
{{ config(severity='warn') }}

select
    sale_id,
    sale_status,
    paid_at
from {{ ref('fct_sales') }}
where sale_status = 'paid' and paid_at is null

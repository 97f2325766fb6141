-- A sale in status `refunded` carries a refund object with a positive refunded amount.
{{ config(severity='warn') }}

select
    sale_id,
    sale_status,
    refund_type,
    refunded_amount
from {{ ref('fct_sales') }}
where
    sale_status = 'refunded'
    and (refund_type is null or refunded_amount <= 0)

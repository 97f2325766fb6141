-- What the producer nets from a sale is never more than the sale's gross value.
{{ config(severity='warn') }}

select
    sale_id,
    gross_amount,
    net_amount
from {{ ref('fct_sales') }}
where net_amount > gross_amount

{#- Event x ticket: the ticket's lots and stock, its attendees by status, check-ins and invoice revenue.
    An attendee status the spec does not list (or none) is counted in count_unlisted_status. -#}
{%- set statuses = var('platform_enums')['attendee_status'] %}

with events as (

    select * from {{ ref('stg_platform__events') }}
    where not is_deleted  -- the event answered 404 (issue 25): its tickets leave with it

),

tickets as (

    select * from {{ ref('stg_platform__event_tickets') }}

),

lots as (

    select
        account,
        ticket_id,
        count(*) as count_lots,
        sum(case when is_active then 1 else 0 end) as count_active_lots,
        sum(quantity) as stock_quantity,
        min(lot_price) as min_lot_price,
        max(lot_price) as max_lot_price
    from {{ ref('stg_platform__event_ticket_lots') }}
    group by account, ticket_id

),

attendees as (

    select
        account,
        ticket_id,
        count(*) as count_attendees,
        {% for status in statuses -%}
            sum(case when attendee_status = '{{ status }}' then 1 else 0 end) as count_{{ snake_case(status) }},
        {% endfor -%}
        sum(case when {{ unlisted('attendee_status', statuses) }} then 1 else 0 end) as count_unlisted_status,
        sum(case when checked_in_at is not null then 1 else 0 end) as count_checked_in,
        sum(case when is_manually_created then 1 else 0 end) as count_manually_created,
        sum(case when attendee_status != 'refunded' then coalesce(invoice_amount, 0) else 0 end)
            as invoice_revenue_amount
    from {{ ref('stg_platform__event_attendees') }}
    where not is_deleted
    group by account, ticket_id

),

final as (

    select
        -- ids
        tickets.account,
        tickets.ticket_id,
        tickets.event_id,

        -- event
        events.event_title,
        events.event_type,
        events.starts_at as event_starts_at,
        events.ends_at as event_ends_at,

        -- ticket
        tickets.ticket_name,
        tickets.is_paid,
        tickets.is_active,
        tickets.is_unlimited,

        -- lots and stock
        coalesce(lots.count_lots, 0) as count_lots,
        coalesce(lots.count_active_lots, 0) as count_active_lots,
        coalesce(lots.stock_quantity, 0) as stock_quantity,
        lots.min_lot_price,
        lots.max_lot_price,

        -- attendees
        coalesce(attendees.count_attendees, 0) as count_attendees,
        {% for status in statuses -%}
            coalesce(attendees.count_{{ snake_case(status) }}, 0) as count_{{ snake_case(status) }},
        {% endfor -%}
        coalesce(attendees.count_unlisted_status, 0) as count_unlisted_status,
        coalesce(attendees.count_manually_created, 0) as count_manually_created,
        coalesce(attendees.count_checked_in, 0) as count_checked_in,
        {{ safe_divide('attendees.count_checked_in', 'attendees.count_attendees') }} as checkin_rate,
        coalesce(attendees.invoice_revenue_amount, 0) as invoice_revenue_amount

    from tickets
    inner join events
        on tickets.account = events.account
        and tickets.event_id = events.event_id
    left join lots
        on tickets.account = lots.account
        and tickets.ticket_id = lots.ticket_id
    left join attendees
        on tickets.account = attendees.account
        and tickets.ticket_id = attendees.ticket_id

)

select * from final

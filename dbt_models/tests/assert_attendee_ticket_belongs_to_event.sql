-- An attendee's ticket is a ticket of the attendee's event.
{{ config(severity='warn') }}

select
    attendees.attendee_id,
    attendees.event_id,
    attendees.ticket_id,
    tickets.event_id as ticket_event_id
from {{ ref('stg_platform__event_attendees') }} as attendees
inner join {{ ref('stg_platform__event_tickets') }} as tickets
    on attendees.account = tickets.account
    and attendees.ticket_id = tickets.ticket_id
where attendees.event_id != tickets.event_id

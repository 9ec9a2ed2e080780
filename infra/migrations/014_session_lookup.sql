-- A session by its CPO and id, whatever the eMSP (OCPI 2.2.1 mod_sessions.asciidoc, PATCH Method: a
-- Session PATCH names only the CPO and the session id). The ingress asks whether the hub holds a
-- session before it accepts a PATCH of it, and the dispatcher reads the session a PATCH merges into;
-- deliveries_object leads with the eMSP, so neither could use it. Ids are CiStrings (types.asciidoc).
create index deliveries_session_lookup on deliveries (cpo_country_code, cpo_party_id, upper(object_id)) where kind = 'session';

-- A page at an arbitrary offset starts from a rank anchor the ingress keeps in memory:
-- every 1,000th key of a caller's list in creation order (packages/store/src/read-model-anchors.ts).
-- New objects go to the end of that order and leave every anchor's rank as it was; an object that
-- leaves the list moves every rank after it. This counter, per model and generation, goes up with
-- every object that leaves (a DELETE, or a key change, which only migrations make), so an ingress
-- knows its anchors are stale without scanning anything. One row per generation: a statement that
-- deletes updates it once.
create table read_model_removals (
  model text not null,
  generation integer not null,
  removed bigint not null,
  primary key (model, generation)
);

create or replace function read_model_counts_remove() returns trigger language plpgsql as $$
declare
  r record;
begin
  for r in select generation, country_code, party_id, count(*) as n from removed group by 1, 2, 3 order by 1, 2, 3 loop
    update read_model_counts set n = n - r.n
     where model = TG_ARGV[0] and generation = r.generation and country_code = r.country_code and party_id = r.party_id;
  end loop;
  delete from read_model_counts where model = TG_ARGV[0] and n = 0;
  insert into read_model_removals (model, generation, removed)
    select TG_ARGV[0], generation, count(*) from removed group by generation order by generation
  on conflict (model, generation) do update set removed = read_model_removals.removed + excluded.removed;
  return null;
end $$;

create or replace function read_model_counts_move() returns trigger language plpgsql as $$
begin
  if (old.generation, old.country_code, old.party_id) is distinct from (new.generation, new.country_code, new.party_id) then
    update read_model_counts set n = n - 1
     where model = TG_ARGV[0] and generation = old.generation and country_code = old.country_code and party_id = old.party_id;
    insert into read_model_counts (model, generation, country_code, party_id, n) values (TG_ARGV[0], new.generation, new.country_code, new.party_id, 1)
    on conflict (model, generation, country_code, party_id) do update set n = read_model_counts.n + 1;
    delete from read_model_counts where model = TG_ARGV[0] and n = 0;
    insert into read_model_removals (model, generation, removed) values (TG_ARGV[0], old.generation, 1)
    on conflict (model, generation) do update set removed = read_model_removals.removed + 1;
  end if;
  return null;
end $$;

-- A TRUNCATE (tests, and rebuild tooling) empties the list: every generation that had objects counts a removal.
create or replace function read_model_counts_clear() returns trigger language plpgsql as $$
begin
  insert into read_model_removals (model, generation, removed)
    select TG_ARGV[0], generation, 1 from read_model_counts where model = TG_ARGV[0] group by generation order by generation
  on conflict (model, generation) do update set removed = read_model_removals.removed + 1;
  delete from read_model_counts where model = TG_ARGV[0];
  return null;
end $$;

-- Pages are served by index-only scans over locations_page / tariffs_page, which need a current
-- visibility map. The defaults vacuum a table only after 20% of it changed; read models change in
-- bulk (projection, rebuild) and by constant PATCHes, so vacuum and analyze them much sooner.
alter table locations set (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.01);
alter table tariffs set (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.01);

-- UNLOCK_CONNECTOR (mod_commands.asciidoc, UnlockConnector Object) is forwarded like the other
-- four commands, so the commands table accepts it.
alter table commands drop constraint commands_command_check;
alter table commands add constraint commands_command_check
  check (command in ('START_SESSION', 'STOP_SESSION', 'RESERVE_NOW', 'CANCEL_RESERVATION', 'UNLOCK_CONNECTOR'));

-- Wake the calls waiting for a key when its holder completes or releases it:
-- a notification on channel idem_keys whose payload is md5(idem_key) (fixed
-- length, whatever the key). Listeners still poll: a notification sent while
-- no listener was connected is not queued for it.
CREATE OR REPLACE FUNCTION idem_keys_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.state = 1 AND (TG_OP = 'DELETE' OR NEW.state <> 1) THEN
		PERFORM pg_notify('idem_keys', md5(OLD.idem_key));
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER idem_keys_notify AFTER UPDATE OR DELETE ON idem_keys
	FOR EACH ROW EXECUTE FUNCTION idem_keys_notify();

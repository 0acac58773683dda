/** Analytics schema versions: 1-37 are release 3's, 38-47 are version 4's. */

/** The last schema version of release 3: the rollback target. */
export const RELEASE_3_SCHEMA_VERSION = 37;

/** The newest schema version this build knows. */
export const LATEST_SCHEMA_VERSION = 47;

/**
 * The oldest database version this build's migrations start from: it carries every migration
 * since the first, so any. An image that squashes old migrations raises it.
 */
export const OLDEST_UPGRADABLE_SCHEMA_VERSION = 0;

//! Geo through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn geo_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"], ":2\r\n"),
        (&["GEODIST", "g", "Palermo", "Catania", "km"], "$8\r\n166.2742\r\n"),
        (&["GEOHASH", "g", "Palermo"], "*1\r\n$11\r\nsqc8b49rny0\r\n"),
        (
            &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"],
            "*2\r\n$7\r\nCatania\r\n$7\r\nPalermo\r\n",
        ),
        (&["GEORADIUS", "g", "15", "37", "100", "km"], "*1\r\n$7\r\nCatania\r\n"),
        (&["GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "300", "km"], ":2\r\n"),
        (&["ZCARD", "d"], ":2\r\n"),
    ]);
}

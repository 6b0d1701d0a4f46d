{
  "targets": [
    {
      "target_name": "filterd_udp",
      "sources": ["udp.c", "steering.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE"]
    }
  ]
}

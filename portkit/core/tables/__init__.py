"""The mapping tables and catalogues (mappings/*.toml) loaded, validated and looked up."""

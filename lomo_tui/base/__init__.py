"""The ground floor every core package stands on: ids and the in-process notice bus. Imports nothing of Lomo
above the store."""

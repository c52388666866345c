"""Realistic German and Israeli names, and the spelling variants people type."""

# fmt: off
GERMAN_FIRST = [
    "Anna", "Lena", "Sophie", "Marie", "Laura", "Julia", "Katharina", "Sabine",
    "Petra", "Claudia", "Monika", "Ursula", "Gisela", "Ingrid", "Hannah", "Emma",
    "Mia", "Clara", "Johanna", "Franziska", "Thomas", "Michael", "Andreas",
    "Stefan", "Christian", "Markus", "Jürgen", "Klaus", "Wolfgang", "Peter",
    "Hans", "Uwe", "Jan", "Jonas", "Lukas", "Felix", "Paul", "Maximilian",
    "Philipp", "Tobias", "Sebastian", "Florian", "Matthias", "Dieter", "Günter",
    "Horst", "Bernd", "Ralf", "Jörg", "Frank",
]
GERMAN_LAST = [
    "Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner",
    "Becker", "Schulz", "Hoffmann", "Schäfer", "Koch", "Bauer", "Richter",
    "Klein", "Wolf", "Schröder", "Neumann", "Schwarz", "Zimmermann", "Braun",
    "Krüger", "Hofmann", "Hartmann", "Lange", "Schmitt", "Werner", "Schmitz",
    "Krause", "Meier", "Lehmann", "Schmid", "Schulze", "Maier", "Köhler",
    "Herrmann", "König", "Walter", "Mayer", "Huber", "Kaiser", "Fuchs", "Peters",
    "Lang", "Scholz", "Möller", "Weiß", "Jung", "Hahn", "Schubert", "Vogel",
    "Friedrich", "Keller", "Günther", "Frank", "Berger", "Winkler", "Roth",
    "Beck", "Lorenz", "Baumann", "Franke", "Albrecht", "Strauß", "Böhm",
]
ISRAELI_FIRST = [
    "Dana", "Noa", "Tamar", "Yael", "Shira", "Maya", "Michal", "Ronit", "Orly",
    "Efrat", "Avital", "Noga", "Hila", "Inbal", "Sarit", "Yossi", "Avi", "Moshe",
    "David", "Yonatan", "Itai", "Eitan", "Omer", "Noam", "Amit", "Gil", "Oren",
    "Ariel", "Tomer", "Nir", "Haim", "Shlomo", "Avraham", "Yitzhak", "Tzvi",
]
ISRAELI_LAST = [
    "Cohen", "Levi", "Mizrahi", "Peretz", "Biton", "Dahan", "Avraham",
    "Friedman", "Malka", "Azulay", "Katz", "Yosef", "David", "Ohayon", "Levy",
    "Gabay", "Ben-David", "Shapiro", "Goldberg", "Rosenberg", "Amar", "Hadad",
    "Ashkenazi", "Segal", "Weiss", "Sasson", "Elbaz", "Halevi", "Ben-Ami",
]

# Each family: the spellings of one name a person may type for another.
VARIANT_FAMILIES = [
    ["Meier", "Meyer", "Maier", "Mayer", "Meir"],
    ["Schmidt", "Schmitt", "Schmid", "Schmit"],
    ["Müller", "Mueller", "Muller", "Miller"],
    ["Schulz", "Schultz", "Schulze"],
    ["Hoffmann", "Hofmann", "Hoffman"],
    ["Fischer", "Fisher"],
    ["Schröder", "Schroeder", "Schroder"],
    ["Weiß", "Weiss", "Weis"],
    ["Strauß", "Strauss", "Straus"],
    ["Cohen", "Kohen", "Cohn", "Kohn"],
    ["Levi", "Levy", "Lewi"],
    ["Mizrahi", "Misrachi", "Mizrachi"],
    ["Katz", "Kats", "Kaz"],
    ["Friedman", "Fridman", "Friedmann"],
    ["Goldberg", "Goldburg", "Goldberk"],
    ["Rosenberg", "Rozenberg", "Rosenburg"],
    ["Ashkenazi", "Ashkenazy", "Aschkenasi"],
    ["Azulay", "Azoulay", "Azulai"],
    ["Haim", "Chaim", "Hayim"],
    ["Yitzhak", "Itzhak", "Jitzchak"],
    ["Tzvi", "Zvi", "Tsvi"],
    ["Yossi", "Yosi", "Josi"],
    ["Yonatan", "Jonatan", "Jonathan"],
    ["Avraham", "Abraham", "Awraham"],
    ["Shlomo", "Schlomo", "Shelomo"],
    ["Katharina", "Catharina", "Katarina"],
    ["Sophie", "Sofie", "Sofia"],
    ["Philipp", "Philip", "Filip"],
    ["Jürgen", "Juergen", "Jurgen"],
    ["Günter", "Günther", "Gunter"],
    ["Michael", "Micha", "Michel"],
]

# Names that are not in the household: a search for them should find no one.
UNKNOWN_NAMES = [
    "Gustav Pfeiffer", "Rüdiger Ostermann", "Xaver Brandstätter", "Ottilie Quast",
    "Wiebke Thamm", "Eberhard Zwick", "Malte Sörensen", "Ida Wenzlaff",
    "Konstantin Ebeling", "Henrike Pauly", "Yehuda Barkai", "Tsipora Elkayam",
    "Boaz Nachmani", "Liat Zaken", "Eliezer Tabib", "Hodaya Ratzabi",
    "Quentin Dubois", "Ingeborg Rautenberg", "Fridolin Kapp", "Lorelei Kunz",
    "Pfeiffer", "Ostermann", "Brandstätter", "Quast", "Thamm", "Zwick",
    "Barkai", "Elkayam", "Nachmani", "Tabib",
]
# fmt: on

package datagen

// The vocabulary of generated records: Colombian cities and neighbourhoods,
// Spanish room, item and material names.

import "slices"

type city struct {
	name          string
	neighborhoods []string
}

var cities = []city{
	{"Bogotá", []string{"Chapinero", "Usaquén", "Teusaquillo", "Cedritos", "Modelia", "La Soledad"}},
	{"Medellín", []string{"El Poblado", "Laureles", "Belén", "Envigado", "La América"}},
	{"Cali", []string{"San Fernando", "Granada", "Ciudad Jardín", "El Peñón"}},
	{"Barranquilla", []string{"El Prado", "Alto Prado", "Riomar", "Villa Country"}},
	{"Bucaramanga", []string{"Cabecera del Llano", "Sotomayor", "Provenza"}},
	{"Cartagena", []string{"Bocagrande", "Manga", "Crespo"}},
}

var streets = []string{"Calle", "Carrera", "Avenida", "Diagonal", "Transversal"}

type propertyKind struct {
	name                 string
	minLevels, maxLevels int
}

var propertyKinds = []propertyKind{
	{"Apartamento", 1, 1},
	{"Apartaestudio", 1, 1},
	{"Casa", 2, 3},
	{"Dúplex", 2, 2},
	{"Local", 1, 2},
	{"Oficina", 1, 1},
}

var propertyDetails = []string{
	"Conjunto cerrado con portería 24 horas",
	"Incluye parqueadero cubierto",
	"Edificio con ascensor",
}

var rooms = []string{
	"Sala", "Comedor", "Cocina", "Baño principal", "Baño social", "Habitación principal",
	"Habitación 2", "Habitación 3", "Estudio", "Patio", "Zona de ropas", "Balcón", "Garaje", "Terraza",
}

var roomDescriptions = []string{"", "", "Buena iluminación natural", "Pintura reciente", "Humedad leve en una esquina"}

var itemNames = []string{
	"Puerta", "Ventana", "Piso", "Paredes", "Techo", "Interruptores", "Tomacorrientes", "Lámpara",
	"Cortinas", "Clóset", "Mesón", "Lavamanos", "Sanitario", "Ducha", "Espejo", "Rejilla",
}

// fixtures are the items only some rooms have, and which: no shower in a
// dining room. Every other item (doors, windows, floor, walls, ceiling,
// switches, sockets, lamp) is in every room, but a roofless one (a patio,
// a balcony, a terrace) has no ceiling and no lamp of its own. Each room
// keeps at least the demo's most items (7) to choose from.
var fixtures = map[string][]string{
	"Cortinas":  {"Sala", "Comedor", "Habitación principal", "Habitación 2", "Habitación 3", "Estudio"},
	"Clóset":    {"Habitación principal", "Habitación 2", "Habitación 3", "Estudio"},
	"Mesón":     {"Cocina", "Zona de ropas"},
	"Lavamanos": {"Baño principal", "Baño social"},
	"Sanitario": {"Baño principal", "Baño social"},
	"Ducha":     {"Baño principal", "Baño social"},
	"Espejo":    {"Baño principal", "Baño social"},
	"Rejilla":   {"Baño principal", "Baño social", "Cocina", "Zona de ropas", "Patio", "Balcón", "Terraza", "Garaje"},
}

// roofless rooms have no ceiling or lamp to inspect.
var roofless = []string{"Patio", "Balcón", "Terraza"}

// fitsIn reports whether item belongs in room.
func fitsIn(item, room string) bool {
	if rooms, ok := fixtures[item]; ok {
		return slices.Contains(rooms, room)
	}
	return !(slices.Contains(roofless, room) && (item == "Techo" || item == "Lámpara"))
}

// materialsOf are the materials each item is made of, from the catalogue:
// a mirror is glass, a switch plastic, a floor never drywall.
var materialsOf = map[string][]string{
	"Puerta":         {"Madera", "Aluminio", "PVC"},
	"Ventana":        {"Vidrio", "Aluminio", "PVC"},
	"Piso":           {"Cerámica", "Porcelanato", "Laminado", "Madera", "Mármol", "Concreto"},
	"Paredes":        {"Estuco", "Drywall", "Concreto", "Cerámica"},
	"Techo":          {"Drywall", "Estuco", "Concreto"},
	"Interruptores":  {"PVC"},
	"Tomacorrientes": {"PVC"},
	"Lámpara":        {"Vidrio", "Aluminio"},
	"Cortinas":       {"PVC", "Aluminio"},
	"Clóset":         {"Madera", "Laminado"},
	"Mesón":          {"Mármol", "Acero inoxidable", "Concreto", "Porcelanato"},
	"Lavamanos":      {"Cerámica", "Porcelanato", "Mármol"},
	"Sanitario":      {"Cerámica", "Porcelanato"},
	"Ducha":          {"Acero inoxidable", "Vidrio", "Aluminio"},
	"Espejo":         {"Vidrio"},
	"Rejilla":        {"Acero inoxidable", "Aluminio", "PVC"},
}

// commentsByRating are what an inspector writes of an item of each rating:
// a to-repair item (2 or less) never "works fine", a 5 is never "broken".
// Each list is as long as the others, so that a rating's choice draws the
// same from the generator and the rest of a dataset stays as it was.
var commentsByRating = [6][]string{
	1: {"", "Roto", "No funciona", "Requiere reparación", "Desgaste severo", "Mancha visible", "Rayones profundos"},
	2: {"", "Requiere reparación", "Desgaste por uso", "Mancha visible", "Rayones profundos", "Funciona con fallas", "Desgaste severo"},
	3: {"", "", "Rayones leves", "Desgaste por uso", "Mancha visible", "Desgaste normal", "Sin novedad"},
	4: {"", "", "Sin novedad", "Rayones leves", "Desgaste normal", "Buen estado", "Funciona correctamente"},
	5: {"", "", "Sin novedad", "Buen estado", "Como nuevo", "Funciona correctamente", "Sin novedad"},
}

var materials = []string{
	"Madera", "Cerámica", "Porcelanato", "Vidrio", "Aluminio", "Drywall", "Concreto", "PVC",
	"Acero inoxidable", "Mármol", "Laminado", "Estuco",
}
